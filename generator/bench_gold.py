# ruff: noqa: E501
"""Spider dev questions on the bundled sample databases, for the generation benchmarks when the
full Spider data is absent: twelve per database, evenly spaced through dev.json, with their gold
SQL (whitespace collapsed). Spider (Yu et al., 2018) is licensed CC BY-SA 4.0.
"""

from __future__ import annotations

SAMPLE_QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("concert_singer", "How many singers do we have?", "SELECT count(*) FROM singer"),
    (
        "concert_singer",
        "What are the names, countries, and ages for every singer in descending order of age?",
        "SELECT name , country , age FROM singer ORDER BY age DESC",
    ),
    (
        "concert_singer",
        "Show the name and the release year of the song by the youngest singer.",
        "SELECT song_name , song_release_year FROM singer ORDER BY age LIMIT 1",
    ),
    (
        "concert_singer",
        "What are  the different countries with singers above age 20?",
        "SELECT DISTINCT country FROM singer WHERE age > 20",
    ),
    (
        "concert_singer",
        "List all song names by singers above the average age.",
        "SELECT song_name FROM singer WHERE age > (SELECT avg(age) FROM singer)",
    ),
    (
        "concert_singer",
        "What are the locations and names of all stations with capacity between 5000 and 10000?",
        "SELECT LOCATION , name FROM stadium WHERE capacity BETWEEN 5000 AND 10000",
    ),
    (
        "concert_singer",
        "What is the name and capacity for the stadium with highest average attendance?",
        "SELECT name , capacity FROM stadium ORDER BY average DESC LIMIT 1",
    ),
    (
        "concert_singer",
        "How many concerts occurred in 2014 or 2015?",
        "SELECT count(*) FROM concert WHERE YEAR = 2014 OR YEAR = 2015",
    ),
    (
        "concert_singer",
        "Show the stadium name and capacity with most number of concerts in year 2014 or after.",
        "SELECT T2.name , T2.capacity FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id WHERE T1.year >= 2014 GROUP BY T2.stadium_id ORDER BY count(*) DESC LIMIT 1",
    ),
    (
        "concert_singer",
        "What is the year that had the most concerts?",
        "SELECT YEAR FROM concert GROUP BY YEAR ORDER BY count(*) DESC LIMIT 1",
    ),
    (
        "concert_singer",
        "Show countries where a singer above age 40 and a singer below 30 are from.",
        "SELECT country FROM singer WHERE age > 40 INTERSECT SELECT country FROM singer WHERE age < 30",
    ),
    (
        "concert_singer",
        "Show the name and theme for all concerts and the number of singers in each concert.",
        "SELECT T2.concert_name , T2.theme , count(*) FROM singer_in_concert AS T1 JOIN concert AS T2 ON T1.concert_id = T2.concert_id GROUP BY T2.concert_id",
    ),
    (
        "pets_1",
        "Find the number of pets whose weight is heavier than 10.",
        "SELECT count(*) FROM pets WHERE weight > 10",
    ),
    (
        "pets_1",
        "How much does the youngest dog weigh?",
        "SELECT weight FROM pets ORDER BY pet_age LIMIT 1",
    ),
    (
        "pets_1",
        "Find number of pets owned by students who are older than 20.",
        "SELECT count(*) FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid WHERE T1.age > 20",
    ),
    (
        "pets_1",
        "How many dog pets are raised by female students?",
        "SELECT count(*) FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid JOIN pets AS T3 ON T2.petid = T3.petid WHERE T1.sex = 'F' AND T3.pettype = 'dog'",
    ),
    (
        "pets_1",
        "Find the first name of students who have cat or dog pet.",
        "SELECT DISTINCT T1.Fname FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid JOIN pets AS T3 ON T3.petid = T2.petid WHERE T3.pettype = 'cat' OR T3.pettype = 'dog'",
    ),
    (
        "pets_1",
        "What are the students' first names who have both cats and dogs as pets?",
        "SELECT T1.Fname FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid JOIN pets AS T3 ON T3.petid = T2.petid WHERE T3.pettype = 'cat' INTERSECT SELECT T1.Fname FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid JOIN pets AS T3 ON T3.petid = T2.petid WHERE T3.pettype = 'dog'",
    ),
    (
        "pets_1",
        "Find the id of students who do not have a cat pet.",
        "SELECT stuid FROM student EXCEPT SELECT T1.stuid FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid JOIN pets AS T3 ON T3.petid = T2.petid WHERE T3.pettype = 'cat'",
    ),
    (
        "pets_1",
        "What is the first name of every student who has a dog but does not have a cat?",
        "SELECT T1.fname , T1.age FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid JOIN pets AS T3 ON T3.petid = T2.petid WHERE T3.pettype = 'dog' AND T1.stuid NOT IN (SELECT T1.stuid FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid JOIN pets AS T3 ON T3.petid = T2.petid WHERE T3.pettype = 'cat')",
    ),
    (
        "pets_1",
        "Find the id and weight of all pets whose age is older than 1.",
        "SELECT petid , weight FROM pets WHERE pet_age > 1",
    ),
    (
        "pets_1",
        "What is the average and maximum age for each pet type?",
        "SELECT avg(pet_age) , max(pet_age) , pettype FROM pets GROUP BY pettype",
    ),
    (
        "pets_1",
        "Find the first name and age of students who have a pet.",
        "SELECT DISTINCT T1.fname , T1.age FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid",
    ),
    (
        "pets_1",
        "What is the id of the pet owned by the student whose last name is 'Smith'?",
        "SELECT T2.petid FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid WHERE T1.Lname = 'Smith'",
    ),
    ("car_1", "How many continents are there?", "SELECT count(*) FROM CONTINENTS;"),
    (
        "car_1",
        "What is the full name of each car maker, along with its id and how many models it produces?",
        "SELECT T1.FullName , T1.Id , count(*) FROM CAR_MAKERS AS T1 JOIN MODEL_LIST AS T2 ON T1.Id = T2.Maker GROUP BY T1.Id;",
    ),
    (
        "car_1",
        "Find the make and production time of the cars that were produced in the earliest year?",
        "SELECT T2.Make , T1.Year FROM CARS_DATA AS T1 JOIN CAR_NAMES AS T2 ON T1.Id = T2.MakeId WHERE T1.Year = (SELECT min(YEAR) FROM CARS_DATA);",
    ),
    (
        "car_1",
        "What is the name of the country with the most car makers?",
        "SELECT T2.CountryName FROM CAR_MAKERS AS T1 JOIN COUNTRIES AS T2 ON T1.Country = T2.CountryId GROUP BY T1.Country ORDER BY Count(*) DESC LIMIT 1;",
    ),
    (
        "car_1",
        "How many car models are produced in the usa?",
        "SELECT count(*) FROM MODEL_LIST AS T1 JOIN CAR_MAKERS AS T2 ON T1.Maker = T2.Id JOIN COUNTRIES AS T3 ON T2.Country = T3.CountryId WHERE T3.CountryName = 'usa';",
    ),
    ("car_1", "What are the makers and models?", "SELECT Maker , Model FROM MODEL_LIST;"),
    (
        "car_1",
        "Which countries in europe have at least 3 car manufacturers?",
        "SELECT T1.CountryName FROM COUNTRIES AS T1 JOIN CONTINENTS AS T2 ON T1.Continent = T2.ContId JOIN CAR_MAKERS AS T3 ON T1.CountryId = T3.Country WHERE T2.Continent = 'europe' GROUP BY T1.CountryName HAVING count(*) >= 3;",
    ),
    (
        "car_1",
        "What is the average horsepower for all cars produced before 1980 ?",
        "select avg(horsepower) from cars_data where year < 1980;",
    ),
    (
        "car_1",
        "How many cars have more than 4 cylinders?",
        "SELECT count(*) FROM CARS_DATA WHERE Cylinders > 4;",
    ),
    (
        "car_1",
        "What are the names and ids of all makers with more than 3 models?",
        "SELECT T1.FullName , T1.Id FROM CAR_MAKERS AS T1 JOIN MODEL_LIST AS T2 ON T1.Id = T2.Maker GROUP BY T1.Id HAVING count(*) > 3;",
    ),
    (
        "car_1",
        "For model volvo, how many cylinders does the car with the least accelerate have?",
        "SELECT T1.cylinders FROM CARS_DATA AS T1 JOIN CAR_NAMES AS T2 ON T1.Id = T2.MakeId WHERE T2.Model = 'volvo' ORDER BY T1.accelerate ASC LIMIT 1;",
    ),
    (
        "car_1",
        "What is the number of carsw ith over 6 cylinders?",
        "SELECT COUNT(*) FROM CARS_DATA WHERE Cylinders > 6;",
    ),
    (
        "flight_2",
        'Which country does Airline "JetBlue Airways" belong to?',
        'SELECT Country FROM AIRLINES WHERE Airline = "JetBlue Airways"',
    ),
    (
        "flight_2",
        "List the airport code and name in the city of Anthony.",
        'SELECT AirportCode , AirportName FROM AIRPORTS WHERE city = "Anthony"',
    ),
    ("flight_2", "How many flights do we have?", "SELECT count(*) FROM FLIGHTS"),
    (
        "flight_2",
        "Which city and country is the Alton airport at?",
        'SELECT City , Country FROM AIRPORTS WHERE AirportName = "Alton"',
    ),
    (
        "flight_2",
        "How many flights depart from 'APG'?",
        'SELECT count(*) FROM FLIGHTS WHERE SourceAirport = "APG"',
    ),
    (
        "flight_2",
        "How many flights arriving in Aberdeen city?",
        'SELECT count(*) FROM FLIGHTS AS T1 JOIN AIRPORTS AS T2 ON T1.DestAirport = T2.AirportCode WHERE T2.City = "Aberdeen"',
    ),
    (
        "flight_2",
        "How many 'United Airlines' flights go to Airport 'ASY'?",
        'SELECT count(*) FROM AIRLINES AS T1 JOIN FLIGHTS AS T2 ON T2.Airline = T1.uid WHERE T1.Airline = "United Airlines" AND T2.DestAirport = "ASY"',
    ),
    (
        "flight_2",
        "Which city has most number of arriving flights?",
        "SELECT T1.City FROM AIRPORTS AS T1 JOIN FLIGHTS AS T2 ON T1.AirportCode = T2.DestAirport GROUP BY T1.City ORDER BY count(*) DESC LIMIT 1",
    ),
    (
        "flight_2",
        "What is the code of airport that has fewest number of flights?",
        "SELECT T1.AirportCode FROM AIRPORTS AS T1 JOIN FLIGHTS AS T2 ON T1.AirportCode = T2.DestAirport OR T1.AirportCode = T2.SourceAirport GROUP BY T1.AirportCode ORDER BY count(*) LIMIT 1",
    ),
    (
        "flight_2",
        "What are airlines that have some flight departing from airport 'AHD'?",
        'SELECT T1.Airline FROM AIRLINES AS T1 JOIN FLIGHTS AS T2 ON T1.uid = T2.Airline WHERE T2.SourceAirport = "AHD"',
    ),
    (
        "flight_2",
        "Find all airlines that have flights from airport 'CVO' but not from 'APG'.",
        'SELECT T1.Airline FROM AIRLINES AS T1 JOIN FLIGHTS AS T2 ON T1.uid = T2.Airline WHERE T2.SourceAirport = "CVO" EXCEPT SELECT T1.Airline FROM AIRLINES AS T1 JOIN FLIGHTS AS T2 ON T1.uid = T2.Airline WHERE T2.SourceAirport = "APG"',
    ),
    (
        "flight_2",
        'What are flight numbers of Airline "United Airlines"?',
        'SELECT T1.FlightNo FROM FLIGHTS AS T1 JOIN AIRLINES AS T2 ON T2.uid = T1.Airline WHERE T2.Airline = "United Airlines"',
    ),
    ("employee_hire_evaluation", "How many employees are there?", "SELECT count(*) FROM employee"),
    (
        "employee_hire_evaluation",
        "List the names of employees and sort in ascending order of age.",
        "SELECT name FROM employee ORDER BY age",
    ),
    (
        "employee_hire_evaluation",
        "Which cities do more than one employee under age 30 come from?",
        "SELECT city FROM employee WHERE age < 30 GROUP BY city HAVING count(*) > 1",
    ),
    (
        "employee_hire_evaluation",
        "How many shops are there in each location?",
        "SELECT count(*) , LOCATION FROM shop GROUP BY LOCATION",
    ),
    (
        "employee_hire_evaluation",
        "find the minimum and maximum number of products of all stores.",
        "SELECT min(Number_products) , max(Number_products) FROM shop",
    ),
    (
        "employee_hire_evaluation",
        "Sort all the shops by number products in descending order, and return the name, location and district of each shop.",
        "SELECT name , LOCATION , district FROM shop ORDER BY number_products DESC",
    ),
    (
        "employee_hire_evaluation",
        "find the name of employee who was awarded the most times in the evaluation.",
        "SELECT t1.name FROM employee AS t1 JOIN evaluation AS t2 ON t1.Employee_ID = t2.Employee_ID GROUP BY t2.Employee_ID ORDER BY count(*) DESC LIMIT 1",
    ),
    (
        "employee_hire_evaluation",
        "Which employee received the biggest bonus? Give me the employee name.",
        "SELECT t1.name FROM employee AS t1 JOIN evaluation AS t2 ON t1.Employee_ID = t2.Employee_ID ORDER BY t2.bonus DESC LIMIT 1",
    ),
    (
        "employee_hire_evaluation",
        "What is the name of the shop that is hiring the largest number of employees?",
        "SELECT t2.name FROM hiring AS t1 JOIN shop AS t2 ON t1.shop_id = t2.shop_id GROUP BY t1.shop_id ORDER BY count(*) DESC LIMIT 1",
    ),
    (
        "employee_hire_evaluation",
        "Which shops run with no employees? Find the shop names",
        "SELECT name FROM shop WHERE shop_id NOT IN (SELECT shop_id FROM hiring)",
    ),
    (
        "employee_hire_evaluation",
        "What is total bonus given in all evaluations?",
        "SELECT sum(bonus) FROM evaluation",
    ),
    (
        "employee_hire_evaluation",
        "What is all the information about hiring?",
        "SELECT * FROM hiring",
    ),
    (
        "student_transcripts_tracking",
        "what are all the addresses including line 1 and line 2?",
        "SELECT line_1 , line_2 FROM addresses",
    ),
    (
        "student_transcripts_tracking",
        "What is the zip code of the address in the city Port Chelsea?",
        "SELECT zip_postcode FROM Addresses WHERE city = 'Port Chelsea'",
    ),
    (
        "student_transcripts_tracking",
        "How many different degree names are offered?",
        "SELECT count(DISTINCT degree_summary_name) FROM Degree_Programs",
    ),
    (
        "student_transcripts_tracking",
        "What are the names and id of courses having at most 2 sections?",
        "SELECT T1.course_name , T1.course_id FROM Courses AS T1 JOIN Sections AS T2 ON T1.course_id = T2.course_id GROUP BY T1.course_id HAVING count(*) <= 2",
    ),
    (
        "student_transcripts_tracking",
        "What is the description of the department whose name has the substring the computer?",
        "SELECT department_description FROM Departments WHERE department_name LIKE '%computer%'",
    ),
    (
        "student_transcripts_tracking",
        "Find the kind of program which most number of students are enrolled in?",
        "SELECT T1.degree_summary_name FROM Degree_Programs AS T1 JOIN Student_Enrolment AS T2 ON T1.degree_program_id = T2.degree_program_id GROUP BY T1.degree_summary_name ORDER BY count(*) DESC LIMIT 1",
    ),
    (
        "student_transcripts_tracking",
        "Which semesters do not have any student enrolled? List the semester name.",
        "SELECT semester_name FROM Semesters WHERE semester_id NOT IN( SELECT semester_id FROM Student_Enrolment )",
    ),
    (
        "student_transcripts_tracking",
        "Find the last name of the students who currently live in the state of North Carolina but have not registered in any degree program.",
        "SELECT T1.last_name FROM Students AS T1 JOIN Addresses AS T2 ON T1.current_address_id = T2.address_id WHERE T2.state_province_county = 'NorthCarolina' EXCEPT SELECT DISTINCT T3.last_name FROM Students AS T3 JOIN Student_Enrolment AS T4 ON T3.student_id = T4.student_id",
    ),
    (
        "student_transcripts_tracking",
        "Who is the first student to register? List the first name, middle name and last name.",
        "SELECT first_name , middle_name , last_name FROM Students ORDER BY date_first_registered ASC LIMIT 1",
    ),
    (
        "student_transcripts_tracking",
        "Which address holds the most number of students currently? List the address id and all lines.",
        "SELECT T1.address_id , T1.line_1 , T1.line_2 FROM Addresses AS T1 JOIN Students AS T2 ON T1.address_id = T2.current_address_id GROUP BY T1.address_id ORDER BY count(*) DESC LIMIT 1",
    ),
    (
        "student_transcripts_tracking",
        "How many transcripts are released?",
        "SELECT count(*) FROM Transcripts",
    ),
    (
        "student_transcripts_tracking",
        "Show the date of the transcript which shows the least number of results, also list the id.",
        "SELECT T2.transcript_date , T1.transcript_id FROM Transcript_Contents AS T1 JOIN Transcripts AS T2 ON T1.transcript_id = T2.transcript_id GROUP BY T1.transcript_id ORDER BY count(*) ASC LIMIT 1",
    ),
    (
        "dog_kennels",
        "Which states have both owners and professionals living there?",
        "SELECT state FROM Owners INTERSECT SELECT state FROM Professionals",
    ),
    (
        "dog_kennels",
        "Which dogs have not cost their owner more than 1000 for treatment ? List the dog names .",
        "select name from dogs where dog_id not in ( select dog_id from treatments group by dog_id having sum(cost_of_treatment) > 1000 )",
    ),
    (
        "dog_kennels",
        "Which owner owns the most dogs? List the owner id, first name and last name.",
        "SELECT T1.owner_id , T2.first_name , T2.last_name FROM Dogs AS T1 JOIN Owners AS T2 ON T1.owner_id = T2.owner_id GROUP BY T1.owner_id ORDER BY count(*) DESC LIMIT 1",
    ),
    (
        "dog_kennels",
        "Which owner has paid for the most treatments on his or her dogs? List the owner id and last name.",
        "SELECT T1.owner_id , T1.last_name FROM Owners AS T1 JOIN Dogs AS T2 ON T1.owner_id = T2.owner_id JOIN Treatments AS T3 ON T2.dog_id = T3.dog_id GROUP BY T1.owner_id ORDER BY count(*) DESC LIMIT 1",
    ),
    (
        "dog_kennels",
        "Which professionals have done at least two types of treatments? List the professional id and cell phone.",
        "SELECT T1.professional_id , T1.cell_number FROM Professionals AS T1 JOIN Treatments AS T2 ON T1.professional_id = T2.professional_id GROUP BY T1.professional_id HAVING count(*) >= 2",
    ),
    (
        "dog_kennels",
        "List the cost of each treatment and the corresponding treatment type description.",
        "SELECT T1.cost_of_treatment , T2.treatment_type_description FROM Treatments AS T1 JOIN treatment_types AS T2 ON T1.treatment_type_code = T2.treatment_type_code",
    ),
    (
        "dog_kennels",
        "List the names of the dogs of the rarest breed and the treatment dates of them.",
        "SELECT T1.name , T2.date_of_treatment FROM Dogs AS T1 JOIN Treatments AS T2 ON T1.dog_id = T2.dog_id WHERE T1.breed_code = ( SELECT breed_code FROM Dogs GROUP BY breed_code ORDER BY count(*) ASC LIMIT 1 )",
    ),
    (
        "dog_kennels",
        "List the last name of the owner owning the youngest dog.",
        "SELECT T1.last_name FROM Owners AS T1 JOIN Dogs AS T2 ON T1.owner_id = T2.owner_id WHERE T2.age = ( SELECT max(age) FROM Dogs )",
    ),
    (
        "dog_kennels",
        "How many dogs went through any treatments?",
        "SELECT count(DISTINCT dog_id) FROM Treatments",
    ),
    (
        "dog_kennels",
        "Which owners live in the state whose name contains the substring 'North'? List his first name, last name and email.",
        "SELECT first_name , last_name , email_address FROM Owners WHERE state LIKE '%North%'",
    ),
    (
        "dog_kennels",
        "How many dogs have not gone through any treatment?",
        "SELECT count(*) FROM Dogs WHERE dog_id NOT IN ( SELECT dog_id FROM Treatments )",
    ),
    (
        "dog_kennels",
        "List the dog name, age and weight of the dogs who have been abandoned? 1 stands for yes, and 0 stands for no.",
        "SELECT name , age , weight FROM Dogs WHERE abandoned_yn = 1",
    ),
)
"""(db_id, question, gold SQL)"""
